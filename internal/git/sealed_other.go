//go:build !linux

package git

import (
	"errors"
	"os"
)

// sealedCopy has no sealed file to offer here: the hook runs from a private
// temporary copy (runRecordedHook's fallback).
func sealedCopy(name string, content []byte) (*os.File, error) {
	return nil, errors.ErrUnsupported
}
