// SPDX-License-Identifier: GPL-2.0
// memfd_amd64.go: memfd_create's number, which Go 1.19's syscall package lacks on amd64.
package main

const sysMemfdCreate = 319
