//go:build !linux

package fakeagent

import "errors"

func schedParent() error               { return errors.ErrUnsupported }
func connectUnix(path string) error    { return errors.ErrUnsupported }
func chmodRaw(path, mode string) error { return errors.ErrUnsupported }
func chownSelf(path string) error      { return errors.ErrUnsupported }
func setxattr(path string) error       { return errors.ErrUnsupported }
func openPTY() error                   { return errors.ErrUnsupported }
