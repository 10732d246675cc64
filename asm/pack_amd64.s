//go:build !purego

#include "textflag.h"

// func packPanelsAVX2(dst, src []float64, off, ld, np, kb, w int)
//
// Row by row of src: each row's np·w values stream from one pointer (BX)
// while the destination jumps by a panel (kb·w values) every w values. A
// panel row is moved as w/4 256-bit moves, then one 128-bit and one 64-bit
// move for w mod 4. The caller checked every bound and that np, kb, w > 0.
TEXT ·packPanelsAVX2(SB), NOSPLIT, $0-88
	MOVQ  dst_base+0(FP), DI
	MOVQ  src_base+24(FP), SI
	MOVQ  off+48(FP), AX
	LEAQ  (SI)(AX*8), SI
	MOVQ  ld+56(FP), R8
	SHLQ  $3, R8                 // row stride of src in bytes
	MOVQ  kb+72(FP), R10         // rows left
	MOVQ  w+80(FP), R11
	MOVQ  R11, R9
	ANDQ  $3, R9                 // w mod 4
	SHRQ  $2, R11                // w / 4
	MOVQ  kb+72(FP), R12
	IMULQ w+80(FP), R12
	SHLQ  $3, R12                // panel size in bytes

row:
	MOVQ SI, BX
	MOVQ DI, DX
	MOVQ np+64(FP), CX

panel:
	XORQ  R13, R13               // byte offset inside the panel row
	MOVQ  R11, AX
	TESTQ AX, AX
	JZ    two

four:
	VMOVUPD (BX), Y0
	VMOVUPD Y0, (DX)(R13*1)
	ADDQ    $32, BX
	ADDQ    $32, R13
	DECQ    AX
	JNZ     four

two:
	TESTQ   $2, R9
	JZ      one
	VMOVUPD (BX), X0
	VMOVUPD X0, (DX)(R13*1)
	ADDQ    $16, BX
	ADDQ    $16, R13

one:
	TESTQ  $1, R9
	JZ     next
	VMOVSD (BX), X0
	VMOVSD X0, (DX)(R13*1)
	ADDQ   $8, BX
	ADDQ   $8, R13

next:
	ADDQ R12, DX
	DECQ CX
	JNZ  panel

	ADDQ R13, DI                 // R13 = w·8: the next row of every panel
	ADDQ R8, SI
	DECQ R10
	JNZ  row

	VZEROUPPER
	RET
