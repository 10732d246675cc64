//go:build !purego

#include "textflag.h"

// func gemmKernel6x8AVX2(k int, a, b, c *float64, ldc int, alpha, beta float64)
//
// C[0:6, 0:8] = beta*C + alpha*A·B on packed panels: a holds k columns of 6
// doubles (A[r][l] at a[6l+r]), b holds k rows of 8 doubles. Each row of the
// 6×8 tile lives in two ymm accumulators (Y0..Y11): per k step two loads of
// B (Y12, Y13), six broadcasts of A (Y14, Y15 alternating) and twelve FMAs,
// which keeps both FMA pipes of the core busy. beta == 0 never reads C.

#define A_PTR SI
#define B_PTR DI
#define C_PTR CX
#define LDC R8
#define K DX

// One k step at byte offsets aoff (into A) and boff (into B).
#define KSTEP(aoff, boff) \
	VMOVUPD      boff(B_PTR), Y12    \
	VMOVUPD      boff+32(B_PTR), Y13 \
	VBROADCASTSD aoff(A_PTR), Y14    \
	VFMADD231PD  Y12, Y14, Y0        \
	VFMADD231PD  Y13, Y14, Y1        \
	VBROADCASTSD aoff+8(A_PTR), Y15  \
	VFMADD231PD  Y12, Y15, Y2        \
	VFMADD231PD  Y13, Y15, Y3        \
	VBROADCASTSD aoff+16(A_PTR), Y14 \
	VFMADD231PD  Y12, Y14, Y4        \
	VFMADD231PD  Y13, Y14, Y5        \
	VBROADCASTSD aoff+24(A_PTR), Y15 \
	VFMADD231PD  Y12, Y15, Y6        \
	VFMADD231PD  Y13, Y15, Y7        \
	VBROADCASTSD aoff+32(A_PTR), Y14 \
	VFMADD231PD  Y12, Y14, Y8        \
	VFMADD231PD  Y13, Y14, Y9        \
	VBROADCASTSD aoff+40(A_PTR), Y15 \
	VFMADD231PD  Y12, Y15, Y10       \
	VFMADD231PD  Y13, Y15, Y11

// Row r of the result: scale the accumulators by alpha (Y14) and add
// beta (Y15) times C.
#define ROW_BETA(ptr, acc0, acc1) \
	VMULPD      Y14, acc0, acc0 \
	VMULPD      Y14, acc1, acc1 \
	VMOVUPD     (ptr), Y12      \
	VMOVUPD     32(ptr), Y13    \
	VFMADD231PD Y15, Y12, acc0  \
	VFMADD231PD Y15, Y13, acc1  \
	VMOVUPD     acc0, (ptr)     \
	VMOVUPD     acc1, 32(ptr)

#define ROW_NOBETA(ptr, acc0, acc1) \
	VMULPD  Y14, acc0, acc0 \
	VMULPD  Y14, acc1, acc1 \
	VMOVUPD acc0, (ptr)     \
	VMOVUPD acc1, 32(ptr)

TEXT ·gemmKernel6x8AVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), K
	MOVQ a+8(FP), A_PTR
	MOVQ b+16(FP), B_PTR
	MOVQ c+24(FP), C_PTR
	MOVQ ldc+32(FP), LDC
	SHLQ $3, LDC

	// Row pointers of C: CX, R9, R10, R11, R12, R13.
	LEAQ (C_PTR)(LDC*1), R9
	LEAQ (C_PTR)(LDC*2), R10
	LEAQ (R10)(LDC*1), R11
	LEAQ (C_PTR)(LDC*4), R12
	LEAQ (R12)(LDC*1), R13

	// Fetch the C tile while the product is computed.
	PREFETCHT0 (C_PTR)
	PREFETCHT0 56(C_PTR)
	PREFETCHT0 (R9)
	PREFETCHT0 56(R9)
	PREFETCHT0 (R10)
	PREFETCHT0 56(R10)
	PREFETCHT0 (R11)
	PREFETCHT0 56(R11)
	PREFETCHT0 (R12)
	PREFETCHT0 56(R12)
	PREFETCHT0 (R13)
	PREFETCHT0 56(R13)

	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11

	MOVQ K, BX
	SHRQ $2, BX
	JZ   tail

loop4:
	// Four k steps: 4×48 bytes of A, 4×64 bytes of B; prefetch the panels
	// a few steps ahead.
	PREFETCHT0 384(A_PTR)
	KSTEP(0, 0)
	PREFETCHT0 512(B_PTR)
	KSTEP(48, 64)
	PREFETCHT0 576(B_PTR)
	KSTEP(96, 128)
	KSTEP(144, 192)
	ADDQ $192, A_PTR
	ADDQ $256, B_PTR
	DECQ BX
	JNZ  loop4

tail:
	ANDQ $3, K
	JZ   done

loop1:
	KSTEP(0, 0)
	ADDQ $48, A_PTR
	ADDQ $64, B_PTR
	DECQ K
	JNZ  loop1

done:
	VBROADCASTSD alpha+40(FP), Y14
	VMOVSD       beta+48(FP), X15
	VXORPD       X12, X12, X12
	VUCOMISD     X12, X15
	JNE          withbeta
	JPS          withbeta

	ROW_NOBETA(C_PTR, Y0, Y1)
	ROW_NOBETA(R9, Y2, Y3)
	ROW_NOBETA(R10, Y4, Y5)
	ROW_NOBETA(R11, Y6, Y7)
	ROW_NOBETA(R12, Y8, Y9)
	ROW_NOBETA(R13, Y10, Y11)
	VZEROUPPER
	RET

withbeta:
	VBROADCASTSD beta+48(FP), Y15
	ROW_BETA(C_PTR, Y0, Y1)
	ROW_BETA(R9, Y2, Y3)
	ROW_BETA(R10, Y4, Y5)
	ROW_BETA(R11, Y6, Y7)
	ROW_BETA(R12, Y8, Y9)
	ROW_BETA(R13, Y10, Y11)
	VZEROUPPER
	RET

// func gemmKernel4x12AVX2(k int, a, b, c *float64, ldc int, alpha, beta float64)
//
// The 4×12 shape: each row of the tile in three ymm accumulators; per k step
// three loads of B (Y12..Y14), four broadcasts of A (Y15) and twelve FMAs —
// one load fewer per step than 6×8.

#define KSTEP12(aoff, boff) \
	VMOVUPD      boff(B_PTR), Y12    \
	VMOVUPD      boff+32(B_PTR), Y13 \
	VMOVUPD      boff+64(B_PTR), Y14 \
	VBROADCASTSD aoff(A_PTR), Y15    \
	VFMADD231PD  Y12, Y15, Y0        \
	VFMADD231PD  Y13, Y15, Y1        \
	VFMADD231PD  Y14, Y15, Y2        \
	VBROADCASTSD aoff+8(A_PTR), Y15  \
	VFMADD231PD  Y12, Y15, Y3        \
	VFMADD231PD  Y13, Y15, Y4        \
	VFMADD231PD  Y14, Y15, Y5        \
	VBROADCASTSD aoff+16(A_PTR), Y15 \
	VFMADD231PD  Y12, Y15, Y6        \
	VFMADD231PD  Y13, Y15, Y7        \
	VFMADD231PD  Y14, Y15, Y8        \
	VBROADCASTSD aoff+24(A_PTR), Y15 \
	VFMADD231PD  Y12, Y15, Y9        \
	VFMADD231PD  Y13, Y15, Y10       \
	VFMADD231PD  Y14, Y15, Y11

#define ROW12_BETA(ptr, acc0, acc1, acc2) \
	VMULPD      Y14, acc0, acc0 \
	VMULPD      Y14, acc1, acc1 \
	VMULPD      Y14, acc2, acc2 \
	VMOVUPD     (ptr), Y12      \
	VFMADD231PD Y15, Y12, acc0  \
	VMOVUPD     32(ptr), Y13    \
	VFMADD231PD Y15, Y13, acc1  \
	VMOVUPD     64(ptr), Y12    \
	VFMADD231PD Y15, Y12, acc2  \
	VMOVUPD     acc0, (ptr)     \
	VMOVUPD     acc1, 32(ptr)   \
	VMOVUPD     acc2, 64(ptr)

#define ROW12_NOBETA(ptr, acc0, acc1, acc2) \
	VMULPD  Y14, acc0, acc0 \
	VMULPD  Y14, acc1, acc1 \
	VMULPD  Y14, acc2, acc2 \
	VMOVUPD acc0, (ptr)     \
	VMOVUPD acc1, 32(ptr)   \
	VMOVUPD acc2, 64(ptr)

TEXT ·gemmKernel4x12AVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), K
	MOVQ a+8(FP), A_PTR
	MOVQ b+16(FP), B_PTR
	MOVQ c+24(FP), C_PTR
	MOVQ ldc+32(FP), LDC
	SHLQ $3, LDC

	LEAQ (C_PTR)(LDC*1), R9
	LEAQ (C_PTR)(LDC*2), R10
	LEAQ (R10)(LDC*1), R11

	PREFETCHT0 (C_PTR)
	PREFETCHT0 88(C_PTR)
	PREFETCHT0 (R9)
	PREFETCHT0 88(R9)
	PREFETCHT0 (R10)
	PREFETCHT0 88(R10)
	PREFETCHT0 (R11)
	PREFETCHT0 88(R11)

	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11

	MOVQ K, BX
	SHRQ $2, BX
	JZ   tail12

loop12x4:
	PREFETCHT0 256(A_PTR)
	KSTEP12(0, 0)
	PREFETCHT0 768(B_PTR)
	KSTEP12(32, 96)
	PREFETCHT0 832(B_PTR)
	KSTEP12(64, 192)
	PREFETCHT0 896(B_PTR)
	KSTEP12(96, 288)
	ADDQ $128, A_PTR
	ADDQ $384, B_PTR
	DECQ BX
	JNZ  loop12x4

tail12:
	ANDQ $3, K
	JZ   done12

loop12x1:
	KSTEP12(0, 0)
	ADDQ $32, A_PTR
	ADDQ $96, B_PTR
	DECQ K
	JNZ  loop12x1

done12:
	VBROADCASTSD alpha+40(FP), Y14
	VMOVSD       beta+48(FP), X15
	VXORPD       X12, X12, X12
	VUCOMISD     X12, X15
	JNE          withbeta12
	JPS          withbeta12

	ROW12_NOBETA(C_PTR, Y0, Y1, Y2)
	ROW12_NOBETA(R9, Y3, Y4, Y5)
	ROW12_NOBETA(R10, Y6, Y7, Y8)
	ROW12_NOBETA(R11, Y9, Y10, Y11)
	VZEROUPPER
	RET

withbeta12:
	VBROADCASTSD beta+48(FP), Y15
	ROW12_BETA(C_PTR, Y0, Y1, Y2)
	ROW12_BETA(R9, Y3, Y4, Y5)
	ROW12_BETA(R10, Y6, Y7, Y8)
	ROW12_BETA(R11, Y9, Y10, Y11)
	VZEROUPPER
	RET
