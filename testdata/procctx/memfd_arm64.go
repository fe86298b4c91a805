// SPDX-License-Identifier: GPL-2.0
// memfd_arm64.go: memfd_create's number on arm64.
package main

const sysMemfdCreate = 279
