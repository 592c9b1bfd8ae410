//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package source

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
