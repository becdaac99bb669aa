//go:build amd64 && !purego

// The AVX2 kernel of nearest16: simdDots on CPUs with AVX2 (simd_amd64.go).

#include "textflag.h"

// tailMask<>: 16 zero words, then 16 words of ones. The 16 words from word r on have ones in
// their last r lanes: the mask of the query's tail chunk when dim mod 16 = r.
DATA tailMask<>+0x00(SB)/8, $0
DATA tailMask<>+0x08(SB)/8, $0
DATA tailMask<>+0x10(SB)/8, $0
DATA tailMask<>+0x18(SB)/8, $0
DATA tailMask<>+0x20(SB)/8, $-1
DATA tailMask<>+0x28(SB)/8, $-1
DATA tailMask<>+0x30(SB)/8, $-1
DATA tailMask<>+0x38(SB)/8, $-1
GLOBL tailMask<>(SB), RODATA|NOPTR, $64

// MADD4 adds to the accumulators Y0-Y3 the products of the 16 query lanes in qy with the 16
// bytes at offset idx of the four rows SI, R10, R11 and R12 (sign-extended to words), as eight
// int32 sums of two products each.
#define MADD4(idx, qy) \
	VPMOVSXBW (SI)(idx*1), Y5; VPMADDWD qy, Y5, Y5; VPADDD Y5, Y0, Y0; \
	VPMOVSXBW (R10)(idx*1), Y6; VPMADDWD qy, Y6, Y6; VPADDD Y6, Y1, Y1; \
	VPMOVSXBW (R11)(idx*1), Y7; VPMADDWD qy, Y7, Y7; VPADDD Y7, Y2, Y2; \
	VPMOVSXBW (R12)(idx*1), Y9; VPMADDWD qy, Y9, Y9; VPADDD Y9, Y3, Y3

// func dotsAVX2(rows []int8, dim int, q []int16, out []int32)
//
// out[i] = Σ_j q[j]·rows[i·dim+j] for i < len(out), j < dim, in int32 arithmetic that wraps:
// exact when every total is within int32. The caller guarantees dim ≥ 16, len(q) ≥ dim and
// len(rows) ≥ len(out)·dim. A row is read 16 bytes (16 dimensions, VPMOVSXBW to int16) at a
// time and multiplied by 16 query lanes (VPMADDWD: eight int32 sums of two products), four rows
// a pass with one accumulator each. When 16 does not divide dim, the last 16 bytes of the row,
// rows[i·dim+dim-16 : i·dim+dim], are taken once more against the query's last 16 lanes with
// those already counted zeroed (Y8), so that no read leaves the row and no row needs padding.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-80
	MOVQ rows_base+0(FP), SI
	MOVQ dim+24(FP), BX
	MOVQ q_base+32(FP), DX
	MOVQ out_base+56(FP), DI
	MOVQ out_len+64(FP), R8

	MOVQ BX, R9
	ANDQ $-16, R9            // R9: the bytes of a row in whole chunks
	MOVQ BX, CX
	ANDQ $15, CX             // CX: the dimensions in the tail chunk
	LEAQ -16(BX), R13        // R13: the tail chunk's offset in a row
	LEAQ tailMask<>(SB), AX
	VMOVDQU (AX)(CX*2), Y8
	VPAND   (DX)(R13*2), Y8, Y8

	LEAQ (SI)(BX*1), R10     // SI, R10, R11, R12: four consecutive rows
	LEAQ (R10)(BX*1), R11
	LEAQ (R11)(BX*1), R12
	CMPQ R8, $4
	JB   one

four:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ  AX, AX

fourChunk:
	VMOVDQU   (DX)(AX*2), Y4
	MADD4(AX, Y4)
	ADDQ      $16, AX
	CMPQ      AX, R9
	JB        fourChunk

	TESTQ     CX, CX
	JZ        fourSum
	MADD4(R13, Y8)

fourSum:
	// Pairwise sums within each 128-bit half: [row 0, row 1, row 2, row 3] in each, then the
	// two halves added.
	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VMOVDQU      X0, (DI)
	ADDQ         $16, DI
	LEAQ         (R12)(BX*1), SI
	LEAQ         (SI)(BX*1), R10
	LEAQ         (R10)(BX*1), R11
	LEAQ         (R11)(BX*1), R12
	SUBQ         $4, R8
	CMPQ         R8, $4
	JAE          four

one:
	TESTQ R8, R8
	JZ    done

oneRow:
	VPXOR Y0, Y0, Y0
	XORQ  AX, AX

oneChunk:
	VPMOVSXBW (SI)(AX*1), Y5
	VPMADDWD  (DX)(AX*2), Y5, Y5
	VPADDD    Y5, Y0, Y0
	ADDQ      $16, AX
	CMPQ      AX, R9
	JB        oneChunk

	TESTQ     CX, CX
	JZ        oneSum
	VPMOVSXBW (SI)(R13*1), Y5
	VPMADDWD  Y8, Y5, Y5
	VPADDD    Y5, Y0, Y0

oneSum:
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (DI)
	ADDQ         $4, DI
	ADDQ         BX, SI
	DECQ         R8
	JNZ          oneRow

done:
	VZEROUPPER
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL   $0, CX
	XGETBV
	MOVL   AX, eax+0(FP)
	MOVL   DX, edx+4(FP)
	RET

// func approxAVX2(dots []int32, invNorm []float32, scale float64, approx []float64, hist []int32)
//
// For i < len(dots), a multiple of 4: approx[i] = scale·dots[i]·invNorm[i] in float64, each
// product rounded as Go rounds it (int32 and float32 convert to float64 exactly, and the two
// multiplications are the same IEEE operations in either order of the first), and hist[b]++ for
// b = min(max(int(approx[i]·B), 0), B), B = len(hist)−1 ≥ 0: the truncation of VCVTTPD2DQ is
// Go's int conversion wherever approx[i]·B is within int32. The caller guarantees len(invNorm)
// and len(approx) ≥ len(dots). Four skills a pass: the conversions and products in YMM
// registers, the four increments scalar.
TEXT ·approxAVX2(SB), NOSPLIT, $0-104
	MOVQ         dots_base+0(FP), SI
	MOVQ         dots_len+8(FP), CX
	MOVQ         invNorm_base+24(FP), DX
	VBROADCASTSD scale+48(FP), Y15
	MOVQ         approx_base+56(FP), DI
	MOVQ         hist_base+80(FP), BX
	MOVQ         hist_len+88(FP), R8
	DECQ         R8                 // R8: B, the top bucket
	VCVTSI2SDQ   R8, X14, X14
	VBROADCASTSD X14, Y14           // Y14: B in each float64 lane
	VMOVD        R8, X13
	VPBROADCASTD X13, X13           // X13: B in each int32 lane
	VPXOR        X12, X12, X12
	XORQ         AX, AX
	CMPQ         CX, $0
	JEQ          approxDone

approxFour:
	VCVTDQ2PD   (SI)(AX*4), Y0
	VMULPD      Y15, Y0, Y0
	VCVTPS2PD   (DX)(AX*4), Y1
	VMULPD      Y1, Y0, Y0
	VMOVUPD     Y0, (DI)(AX*8)
	VMULPD      Y14, Y0, Y0
	VCVTTPD2DQY Y0, X0
	VPMAXSD     X12, X0, X0
	VPMINSD     X13, X0, X0
	VMOVQ       X0, R9
	VPEXTRQ     $1, X0, R11
	MOVL        R9, R10
	SHRQ        $32, R9
	INCL        (BX)(R10*4)
	INCL        (BX)(R9*4)
	MOVL        R11, R10
	SHRQ        $32, R11
	INCL        (BX)(R10*4)
	INCL        (BX)(R11*4)
	ADDQ        $4, AX
	CMPQ        AX, CX
	JB          approxFour

approxDone:
	VZEROUPPER
	RET
