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

