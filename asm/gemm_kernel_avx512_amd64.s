//go:build !purego

#include "textflag.h"

// func gemmKernel12x16AVX512(k int, a, b, c *float64, ldc int, alpha, beta float64)
//
// C[0:12, 0:16] = beta*C + alpha*A·B on packed panels: a holds k columns of
// 12 doubles (A[r][l] at a[12l+r]), b holds k rows of 16 doubles. Each row of
// the 12×16 tile lives in two zmm accumulators (Z0..Z23): per k step two
// loads of B (Z24, Z25), twelve broadcasts of A (Z26, Z27 alternating) and 24
// FMAs — 24 independent accumulator chains, enough to cover the FMA latency
// of two 512-bit pipes. beta == 0 never reads C.

#define A_PTR SI
#define B_PTR DI
#define C_PTR CX
#define LDC R8
#define K DX

// One k step at byte offsets aoff (into A) and boff (into B).
#define KSTEP16(aoff, boff) \
	VMOVUPD      boff(B_PTR), Z24 \
	VMOVUPD      boff+64(B_PTR), Z25 \
	VBROADCASTSD aoff(A_PTR), Z26 \
	VFMADD231PD  Z24, Z26, Z0 \
	VFMADD231PD  Z25, Z26, Z1 \
	VBROADCASTSD aoff+8(A_PTR), Z27 \
	VFMADD231PD  Z24, Z27, Z2 \
	VFMADD231PD  Z25, Z27, Z3 \
	VBROADCASTSD aoff+16(A_PTR), Z26 \
	VFMADD231PD  Z24, Z26, Z4 \
	VFMADD231PD  Z25, Z26, Z5 \
	VBROADCASTSD aoff+24(A_PTR), Z27 \
	VFMADD231PD  Z24, Z27, Z6 \
	VFMADD231PD  Z25, Z27, Z7 \
	VBROADCASTSD aoff+32(A_PTR), Z26 \
	VFMADD231PD  Z24, Z26, Z8 \
	VFMADD231PD  Z25, Z26, Z9 \
	VBROADCASTSD aoff+40(A_PTR), Z27 \
	VFMADD231PD  Z24, Z27, Z10 \
	VFMADD231PD  Z25, Z27, Z11 \
	VBROADCASTSD aoff+48(A_PTR), Z26 \
	VFMADD231PD  Z24, Z26, Z12 \
	VFMADD231PD  Z25, Z26, Z13 \
	VBROADCASTSD aoff+56(A_PTR), Z27 \
	VFMADD231PD  Z24, Z27, Z14 \
	VFMADD231PD  Z25, Z27, Z15 \
	VBROADCASTSD aoff+64(A_PTR), Z26 \
	VFMADD231PD  Z24, Z26, Z16 \
	VFMADD231PD  Z25, Z26, Z17 \
	VBROADCASTSD aoff+72(A_PTR), Z27 \
	VFMADD231PD  Z24, Z27, Z18 \
	VFMADD231PD  Z25, Z27, Z19 \
	VBROADCASTSD aoff+80(A_PTR), Z26 \
	VFMADD231PD  Z24, Z26, Z20 \
	VFMADD231PD  Z25, Z26, Z21 \
	VBROADCASTSD aoff+88(A_PTR), Z27 \
	VFMADD231PD  Z24, Z27, Z22 \
	VFMADD231PD  Z25, Z27, Z23

// Row of the result at R9: scale the accumulators by alpha (Z26), add beta
// (Z27) times C, store, and advance R9 to the next row.
#define ROW16_BETA(acc0, acc1) \
	VMULPD      Z26, acc0, acc0 \
	VMULPD      Z26, acc1, acc1 \
	VMOVUPD     (R9), Z24       \
	VMOVUPD     64(R9), Z25     \
	VFMADD231PD Z27, Z24, acc0  \
	VFMADD231PD Z27, Z25, acc1  \
	VMOVUPD     acc0, (R9)      \
	VMOVUPD     acc1, 64(R9)    \
	ADDQ        LDC, R9

#define ROW16_NOBETA(acc0, acc1) \
	VMULPD  Z26, acc0, acc0 \
	VMULPD  Z26, acc1, acc1 \
	VMOVUPD acc0, (R9)      \
	VMOVUPD acc1, 64(R9)    \
	ADDQ    LDC, R9

TEXT ·gemmKernel12x16AVX512(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), K
	MOVQ a+8(FP), A_PTR
	MOVQ b+16(FP), B_PTR
	MOVQ c+24(FP), C_PTR
	MOVQ ldc+32(FP), LDC
	SHLQ $3, LDC

	// Fetch the C tile (12 rows of 128 bytes) while the product is computed.
	MOVQ C_PTR, R9
	MOVQ $12, R10

prefetchc:
	PREFETCHT0 (R9)
	PREFETCHT0 120(R9)
	ADDQ       LDC, R9
	DECQ       R10
	JNZ        prefetchc

	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	VPXORQ Z16, Z16, Z16
	VPXORQ Z17, Z17, Z17
	VPXORQ Z18, Z18, Z18
	VPXORQ Z19, Z19, Z19
	VPXORQ Z20, Z20, Z20
	VPXORQ Z21, Z21, Z21
	VPXORQ Z22, Z22, Z22
	VPXORQ Z23, Z23, Z23

	MOVQ K, BX
	SHRQ $2, BX
	JZ   tail16

loop16x4:
	// Four k steps: 4×96 bytes of A, 4×128 bytes of B; prefetch the panels
	// a few steps ahead.
	PREFETCHT0 768(A_PTR)
	PREFETCHT0 1024(B_PTR)
	KSTEP16(0, 0)
	PREFETCHT0 832(A_PTR)
	PREFETCHT0 1088(B_PTR)
	KSTEP16(96, 128)
	PREFETCHT0 1152(B_PTR)
	KSTEP16(192, 256)
	PREFETCHT0 1216(B_PTR)
	KSTEP16(288, 384)
	ADDQ $384, A_PTR
	ADDQ $512, B_PTR
	DECQ BX
	JNZ  loop16x4

tail16:
	ANDQ $3, K
	JZ   done16

loop16x1:
	KSTEP16(0, 0)
	ADDQ $96, A_PTR
	ADDQ $128, B_PTR
	DECQ K
	JNZ  loop16x1

done16:
	MOVQ         C_PTR, R9
	VBROADCASTSD alpha+40(FP), Z26
	VMOVSD       beta+48(FP), X27
	VXORPD       X24, X24, X24
	VUCOMISD     X24, X27
	JNE          withbeta16
	JPS          withbeta16

	ROW16_NOBETA(Z0, Z1)
	ROW16_NOBETA(Z2, Z3)
	ROW16_NOBETA(Z4, Z5)
	ROW16_NOBETA(Z6, Z7)
	ROW16_NOBETA(Z8, Z9)
	ROW16_NOBETA(Z10, Z11)
	ROW16_NOBETA(Z12, Z13)
	ROW16_NOBETA(Z14, Z15)
	ROW16_NOBETA(Z16, Z17)
	ROW16_NOBETA(Z18, Z19)
	ROW16_NOBETA(Z20, Z21)
	ROW16_NOBETA(Z22, Z23)
	VZEROUPPER
	RET

withbeta16:
	VBROADCASTSD beta+48(FP), Z27
	ROW16_BETA(Z0, Z1)
	ROW16_BETA(Z2, Z3)
	ROW16_BETA(Z4, Z5)
	ROW16_BETA(Z6, Z7)
	ROW16_BETA(Z8, Z9)
	ROW16_BETA(Z10, Z11)
	ROW16_BETA(Z12, Z13)
	ROW16_BETA(Z14, Z15)
	ROW16_BETA(Z16, Z17)
	ROW16_BETA(Z18, Z19)
	ROW16_BETA(Z20, Z21)
	ROW16_BETA(Z22, Z23)
	VZEROUPPER
	RET
