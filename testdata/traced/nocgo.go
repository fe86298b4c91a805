// SPDX-License-Identifier: GPL-2.0
// nocgo.go: the pure-Go build has no C thread-locals.
//go:build !cgo

package main

func cThreadLocals() int { return 0 }
