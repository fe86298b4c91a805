// SPDX-License-Identifier: GPL-2.0
// notruth.go: a build that never references runtime.MemProfile, so the linker turns memory profiling off.
//go:build nomemprofile

package main

import (
	"errors"
	"runtime"
)

func snapshot() interface{} { return nil }

func truth(interface{}, []*job) (map[string]*funcOut, int) {
	return nil, runtime.MemProfileRate
}

// writeAllocs: this build has no memory profile to write.
func writeAllocs(string) error { return errors.New("built with -tags nomemprofile: no allocs profile") }
