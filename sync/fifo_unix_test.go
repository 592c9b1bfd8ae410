//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sync

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
