//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package source

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
