//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sync

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
