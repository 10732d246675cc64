//go:build purego

package asm

// purego reports whether this build has no assembly (build tag purego).
const purego = true
