//go:build !purego && !netlib

package main

const altBuild = false
