#include "textflag.h"

// func dotsPacked(w, q, out []int64)
//
// For each block b < len(out)/4 and lane l < 4: out[4b+l] = Σ_j w[b·4·len(q) + 4j + l]·q[j],
// two dimensions a pass; len(q) even and at least 2, len(w) at least len(out)·len(q)
// (dotsPackedRows checks). Structured loops: no pass goes through the block dispatcher the Go
// compiler gives every loop of a function.
TEXT ·dotsPacked(SB), NOSPLIT, $0-72
	I64Load w_base+0(FP)
	Set R0
	I64Load q_base+24(FP)
	Set R1
	I64Load out_base+48(FP)
	Set R2
	// R3: the end of out; R4: the end of q.
	Get R2
	I64Load out_len+56(FP)
	I64Const $3
	I64Shl
	I64Add
	Set R3
	Get R1
	I64Load q_len+32(FP)
	I64Const $3
	I64Shl
	I64Add
	Set R4

	Block
	Loop
		Get R2
		Get R3
		I64GeU
		BrIf $1

		I64Const $0
		Set R8
		I64Const $0
		Set R9
		I64Const $0
		Set R10
		I64Const $0
		Set R11
		Get R1
		Set R5

		Loop
			Get R5
			I32WrapI64
			I64Load $0
			Set R6
			Get R5
			I32WrapI64
			I64Load $8
			Set R7

			Get R8
			Get R0
			I32WrapI64
			I64Load $0
			Get R6
			I64Mul
			Get R0
			I32WrapI64
			I64Load $32
			Get R7
			I64Mul
			I64Add
			I64Add
			Set R8

			Get R9
			Get R0
			I32WrapI64
			I64Load $8
			Get R6
			I64Mul
			Get R0
			I32WrapI64
			I64Load $40
			Get R7
			I64Mul
			I64Add
			I64Add
			Set R9

			Get R10
			Get R0
			I32WrapI64
			I64Load $16
			Get R6
			I64Mul
			Get R0
			I32WrapI64
			I64Load $48
			Get R7
			I64Mul
			I64Add
			I64Add
			Set R10

			Get R11
			Get R0
			I32WrapI64
			I64Load $24
			Get R6
			I64Mul
			Get R0
			I32WrapI64
			I64Load $56
			Get R7
			I64Mul
			I64Add
			I64Add
			Set R11

			Get R0
			I64Const $64
			I64Add
			Set R0
			Get R5
			I64Const $16
			I64Add
			Tee R5
			Get R4
			I64LtU
			BrIf $0
		End

		Get R2
		I32WrapI64
		Get R8
		I64Store $0
		Get R2
		I32WrapI64
		Get R9
		I64Store $8
		Get R2
		I32WrapI64
		Get R10
		I64Store $16
		Get R2
		I32WrapI64
		Get R11
		I64Store $24
		Get R2
		I64Const $32
		I64Add
		Set R2
		Br $0
	End
	End
	RET


// func pushRing(off, to []int32, w, p, r []float64, queue, nodes []int32, mark []uint32, gamma, eps float64, stamp uint32, mask, maxPushes, nq, nn int, want []int32, wantOn int) (pushes, nodesLen int)
//
// pushRingGo in WebAssembly: forward push's loop (push.go) with the queue a ring of mask+1
// entries, in structured loops and branches that the Go compiler would send through the
// function's block dispatcher, without bounds checks: push sizes every list as pushRingGo
// needs. want advances in its argument slots as its nodes are found marked.
TEXT ·pushRing(SB), NOSPLIT, $0-296
	I64Load off_base+0(FP)
	Set R0
	I64Load to_base+24(FP)
	Set R1
	I64Load w_base+48(FP)
	Set R2
	I64Load p_base+72(FP)
	Set R3
	I64Load r_base+96(FP)
	Set R4
	I64Load queue_base+120(FP)
	Set R5
	I64Load nodes_base+144(FP)
	Set R6
	I64Load mark_base+168(FP)
	Set R7
	F64Load gamma+192(FP)
	Set F16
	F64Load eps+200(FP)
	Set F17
	// F22: 1 − γ.
	F64Const $1.0
	Get F16
	F64Sub
	Set F22
	I64Const $0
	Set R8 // head
	I64Load nq+232(FP)
	Set R9
	I64Load nn+240(FP)
	Set R10
	I64Const $0
	Set R11 // pushes

	Block
	Loop
		// while head < nq && pushes < maxPushes
		Get R8
		Get R9
		I64GeS
		BrIf $1
		Get R11
		I64Load maxPushes+224(FP)
		I64GeS
		BrIf $1

		// while len(want) > 0 && mark[want[0]] == stamp: want = want[1:]
		Block
		Loop
			I64Load want_len+256(FP)
			I64Eqz
			BrIf $1
			Get R7
			I64Load want_base+248(FP)
			I32WrapI64
			I64Load32S $0
			I64Const $2
			I64Shl
			I64Add
			I32WrapI64
			I32Load $0
			I32Load stamp+208(FP)
			I32Ne
			BrIf $1
			Get SP
			I64Load want_base+248(FP)
			I64Const $4
			I64Add
			I64Store want_base+248(FP)
			Get SP
			I64Load want_len+256(FP)
			I64Const $1
			I64Sub
			I64Store want_len+256(FP)
			Br $0
		End
		End
		// none left of a list (wantOn): done
		I64Load wantOn+272(FP)
		I64Const $0
		I64Ne
		I64Load want_len+256(FP)
		I64Eqz
		I32And
		BrIf $1

		// u = queue[head & mask] (R14); ru = r[u] (F18); r[u] = 0
		Get R5
		Get R8
		I64Load mask+216(FP)
		I64And
		I64Const $2
		I64Shl
		I64Add
		I32WrapI64
		I64Load32S $0
		Set R14
		Get R4
		Get R14
		I64Const $3
		I64Shl
		I64Add
		Set R15
		Get R15
		I32WrapI64
		F64Load $0
		Set F18
		Get R15
		I32WrapI64
		F64Const $0.0
		F64Store $0
		Get R8
		I64Const $1
		I64Add
		Set R8
		Get R11
		I64Const $1
		I64Add
		Set R11

		// lo, hi = off[u], off[u+1] (R12, R13)
		Get R0
		Get R14
		I64Const $2
		I64Shl
		I64Add
		Set R15
		Get R15
		I32WrapI64
		I64Load32S $0
		Set R12
		Get R15
		I32WrapI64
		I64Load32S $4
		Set R13

		// p[u] += ru for a row without entries, else γ·ru
		Get R3
		Get R14
		I64Const $3
		I64Shl
		I64Add
		Set R15
		Get R15
		I32WrapI64
		Get R15
		I32WrapI64
		F64Load $0
		Get F18
		Get F16
		Get F18
		F64Mul
		Get R12
		Get R13
		I64Eq
		Select
		F64Add
		F64Store $0

		// share = (1 − γ)·ru
		Get F22
		Get F18
		F64Mul
		Set F19

		Block
		Get R12
		Get R13
		I64GeS
		BrIf $0
		Loop
			// v = to[i] (R14)
			Get R1
			Get R12
			I64Const $2
			I64Shl
			I64Add
			I32WrapI64
			I64Load32S $0
			Set R14
			// rv = r[v] (F20); nv = rv + share·w[i] (F21); r[v] = nv
			Get R4
			Get R14
			I64Const $3
			I64Shl
			I64Add
			Set R15
			Get R15
			I32WrapI64
			F64Load $0
			Tee F20
			Get F19
			Get R2
			Get R12
			I64Const $3
			I64Shl
			I64Add
			I32WrapI64
			F64Load $0
			F64Mul
			F64Add
			Set F21
			Get R15
			I32WrapI64
			Get F21
			F64Store $0
			// queue[nq & mask] = v; nq += rv <= eps && nv > eps
			Get R5
			Get R9
			I64Load mask+216(FP)
			I64And
			I64Const $2
			I64Shl
			I64Add
			I32WrapI64
			Get R14
			I64Store32 $0
			Get R9
			Get F20
			Get F17
			F64Le
			Get F21
			Get F17
			F64Gt
			I32And
			I64ExtendI32U
			I64Add
			Set R9
			// nodes[nn] = v; nn += mark[v] != stamp; mark[v] = stamp
			Get R6
			Get R10
			I64Const $2
			I64Shl
			I64Add
			I32WrapI64
			Get R14
			I64Store32 $0
			Get R7
			Get R14
			I64Const $2
			I64Shl
			I64Add
			Set R15
			Get R10
			Get R15
			I32WrapI64
			I32Load $0
			I32Load stamp+208(FP)
			I32Ne
			I64ExtendI32U
			I64Add
			Set R10
			Get R15
			I32WrapI64
			I32Load stamp+208(FP)
			I32Store $0

			Get R12
			I64Const $1
			I64Add
			Tee R12
			Get R13
			I64LtS
			BrIf $0
		End
		End
		Br $0
	End
	End

	Get SP
	Get R11
	I64Store pushes+280(FP)
	Get SP
	Get R10
	I64Store nodesLen+288(FP)
	RET

// func dotCosine(row []int8, q []float32) float32
//
// offerCosine's dot product: four sums, sum j mod 4 of q[j]·row[j] in index order over the
// whole passes of four, the rest into the first, then (s0 + s1) + (s2 + s3); len(q) at least
// len(row), as offerCosine passes.
TEXT ·dotCosine(SB), NOSPLIT, $0-52
	I64Load row_base+0(FP)
	Set R0
	I64Load q_base+24(FP)
	Set R1
	// R2: the end of the whole passes; R3: the end of row.
	Get R0
	I64Load row_len+8(FP)
	I64Add
	Set R3
	Get R0
	I64Load row_len+8(FP)
	I64Const $-4
	I64And
	I64Add
	Set R2
	F32Const $0.0
	Set F0
	F32Const $0.0
	Set F1
	F32Const $0.0
	Set F2
	F32Const $0.0
	Set F3

	Block
	Get R0
	Get R2
	I64GeU
	BrIf $0
	Loop
		Get F0
		Get R1
		I32WrapI64
		F32Load $0
		Get R0
		I32WrapI64
		I32Load8S $0
		F32ConvertI32S
		F32Mul
		F32Add
		Set F0
		Get F1
		Get R1
		I32WrapI64
		F32Load $4
		Get R0
		I32WrapI64
		I32Load8S $1
		F32ConvertI32S
		F32Mul
		F32Add
		Set F1
		Get F2
		Get R1
		I32WrapI64
		F32Load $8
		Get R0
		I32WrapI64
		I32Load8S $2
		F32ConvertI32S
		F32Mul
		F32Add
		Set F2
		Get F3
		Get R1
		I32WrapI64
		F32Load $12
		Get R0
		I32WrapI64
		I32Load8S $3
		F32ConvertI32S
		F32Mul
		F32Add
		Set F3
		Get R1
		I64Const $16
		I64Add
		Set R1
		Get R0
		I64Const $4
		I64Add
		Tee R0
		Get R2
		I64LtU
		BrIf $0
	End
	End

	Block
	Get R0
	Get R3
	I64GeU
	BrIf $0
	Loop
		Get F0
		Get R1
		I32WrapI64
		F32Load $0
		Get R0
		I32WrapI64
		I32Load8S $0
		F32ConvertI32S
		F32Mul
		F32Add
		Set F0
		Get R1
		I64Const $4
		I64Add
		Set R1
		Get R0
		I64Const $1
		I64Add
		Tee R0
		Get R3
		I64LtU
		BrIf $0
	End
	End

	Get SP
	Get F0
	Get F1
	F32Add
	Get F2
	Get F3
	F32Add
	F32Add
	F32Store ret+48(FP)
	RET

// func insertCandidates(cs []candidate)
//
// insertCandidatesGo in WebAssembly: insertion sort, best first by better (score down, id up),
// over 16-byte candidates {id int, score float64}, in structured loops.
TEXT ·insertCandidates(SB), NOSPLIT, $0-24
	I64Load cs_base+0(FP)
	Set R0
	// R1: the end of cs; R2: the candidate to insert.
	I64Load cs_len+8(FP)
	I64Const $4
	I64Shl
	Get R0
	I64Add
	Set R1
	Get R0
	I64Const $16
	I64Add
	Set R2

	Block
	Loop
		Get R2
		Get R1
		I64GeU
		BrIf $1
		// x (R3, F16) = *R2; R4: the hole.
		Get R2
		I32WrapI64
		I64Load $0
		Set R3
		Get R2
		I32WrapI64
		F64Load $8
		Set F16
		Get R2
		Set R4

		Block
		Loop
			Get R4
			Get R0
			I64LeU
			BrIf $1
			// y (R6, F17) = the candidate before the hole (R5).
			Get R4
			I64Const $16
			I64Sub
			Tee R5
			I32WrapI64
			I64Load $0
			Set R6
			Get R5
			I32WrapI64
			F64Load $8
			Set F17
			// Stop unless better(x, y): x.score > y.score, or equal and x.id < y.id.
			Get F16
			Get F17
			F64Gt
			Get F16
			Get F17
			F64Eq
			Get R3
			Get R6
			I64LtS
			I32And
			I32Or
			I32Eqz
			BrIf $1
			// y moves into the hole.
			Get R4
			I32WrapI64
			Get R6
			I64Store $0
			Get R4
			I32WrapI64
			Get F17
			F64Store $8
			Get R5
			Set R4
			Br $0
		End
		End

		Get R4
		I32WrapI64
		Get R3
		I64Store $0
		Get R4
		I32WrapI64
		Get F16
		F64Store $8
		Get R2
		I64Const $16
		I64Add
		Set R2
		Br $0
	End
	End
	RET

// func addPostings(scores []float64, hits []uint64, docs []int32, imps []float64, bit uint64)
//
// addPostingsGo in WebAssembly: for each posting i, scores[docs[i]] += imps[i] and
// hits[docs[i]] |= bit; every document below len(scores) and len(hits), len(imps) at least
// len(docs) (recall's read passes a memory's validated postings).
TEXT ·addPostings(SB), NOSPLIT, $0-104
	I64Load scores_base+0(FP)
	Set R0
	I64Load hits_base+24(FP)
	Set R1
	I64Load docs_base+48(FP)
	Set R2
	I64Load imps_base+72(FP)
	Set R3
	I64Load bit+96(FP)
	Set R4
	// R5: the end of docs.
	Get R2
	I64Load docs_len+56(FP)
	I64Const $2
	I64Shl
	I64Add
	Set R5

	Block
	Loop
		Get R2
		Get R5
		I64GeU
		BrIf $1
		// R6: the document's offset in scores and hits.
		Get R2
		I32WrapI64
		I64Load32U $0
		I64Const $3
		I64Shl
		Set R6
		// scores[d] += imps[i]
		Get R0
		Get R6
		I64Add
		I32WrapI64
		Get R0
		Get R6
		I64Add
		I32WrapI64
		F64Load $0
		Get R3
		I32WrapI64
		F64Load $0
		F64Add
		F64Store $0
		// hits[d] |= bit
		Get R1
		Get R6
		I64Add
		I32WrapI64
		Get R1
		Get R6
		I64Add
		I32WrapI64
		I64Load $0
		Get R4
		I64Or
		I64Store $0
		Get R2
		I64Const $4
		I64Add
		Set R2
		Get R3
		I64Const $8
		I64Add
		Set R3
		Br $0
	End
	End
	RET

// func addPostingsTouched(scores []float64, hits []uint64, docs []int32, imps []float64, touched []int32, bit uint64, nt int) int
//
// addPostingsTouchedGo in WebAssembly: addPostings that also writes each document at
// touched[nt] and counts it (nt+1) when its score was 0 before: returns the new count. touched
// has room for len(docs) more.
TEXT ·addPostingsTouched(SB), NOSPLIT, $0-144
	I64Load scores_base+0(FP)
	Set R0
	I64Load hits_base+24(FP)
	Set R1
	I64Load docs_base+48(FP)
	Set R2
	I64Load imps_base+72(FP)
	Set R3
	I64Load bit+120(FP)
	Set R4
	Get R2
	I64Load docs_len+56(FP)
	I64Const $2
	I64Shl
	I64Add
	Set R5
	// R7: the place of touched[nt].
	I64Load touched_base+96(FP)
	I64Load nt+128(FP)
	I64Const $2
	I64Shl
	I64Add
	Set R7

	Block
	Loop
		Get R2
		Get R5
		I64GeU
		BrIf $1
		// R8: the document; R6: its offset in scores and hits.
		Get R2
		I32WrapI64
		I64Load32U $0
		Tee R8
		I64Const $3
		I64Shl
		Set R6
		// touched[nt] = d; nt += scores[d] == 0 (as bits)
		Get R7
		I32WrapI64
		Get R8
		I64Store32 $0
		Get R7
		Get R0
		Get R6
		I64Add
		I32WrapI64
		I64Load $0
		I64Eqz
		I64ExtendI32U
		I64Const $2
		I64Shl
		I64Add
		Set R7
		// scores[d] += imps[i]
		Get R0
		Get R6
		I64Add
		I32WrapI64
		Get R0
		Get R6
		I64Add
		I32WrapI64
		F64Load $0
		Get R3
		I32WrapI64
		F64Load $0
		F64Add
		F64Store $0
		// hits[d] |= bit
		Get R1
		Get R6
		I64Add
		I32WrapI64
		Get R1
		Get R6
		I64Add
		I32WrapI64
		I64Load $0
		Get R4
		I64Or
		I64Store $0
		Get R2
		I64Const $4
		I64Add
		Set R2
		Get R3
		I64Const $8
		I64Add
		Set R3
		Br $0
	End
	End

	// return (R7 − &touched[0]) / 4
	Get SP
	Get R7
	I64Load touched_base+96(FP)
	I64Sub
	I64Const $2
	I64ShrU
	I64Store ret+136(FP)
	RET

// func nextAbove(scores []float64, d int, lo uint64) int
//
// nextAboveGo in WebAssembly: the first d' ≥ d, d' ≡ d mod 4, whose four scores from d' hold
// one whose bits are lo or more (unsigned), or the first d' past len(scores) − 4.
TEXT ·nextAbove(SB), NOSPLIT, $0-48
	I64Load scores_base+0(FP)
	Set R0
	I64Load d+24(FP)
	Set R1
	I64Load lo+32(FP)
	Set R2
	// R3: the last start of four: len(scores) − 4.
	I64Load scores_len+8(FP)
	I64Const $4
	I64Sub
	Set R3

	Block
	Loop
		Get R1
		Get R3
		I64GtS
		BrIf $1
		// R4: the address of scores[d].
		Get R0
		Get R1
		I64Const $3
		I64Shl
		I64Add
		Set R4
		Get R4
		I32WrapI64
		I64Load $0
		Get R2
		I64GeU
		Get R4
		I32WrapI64
		I64Load $8
		Get R2
		I64GeU
		I32Or
		Get R4
		I32WrapI64
		I64Load $16
		Get R2
		I64GeU
		I32Or
		Get R4
		I32WrapI64
		I64Load $24
		Get R2
		I64GeU
		I32Or
		BrIf $1
		Get R1
		I64Const $4
		I64Add
		Set R1
		Br $0
	End
	End

	Get SP
	Get R1
	I64Store ret+40(FP)
	RET
