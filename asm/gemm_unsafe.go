package asm

import "unsafe"

// unsafeData returns a pointer to the first element of s, valid also when
// len(s) == 0 (k == 0: the kernel then reads nothing).
func unsafeData(s []float64) *float64 { return unsafe.SliceData(s) }
