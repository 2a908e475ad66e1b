package models

import (
	"fmt"
	"io/fs"
)

// readFile reads a project file, refusing anything that is not a regular
// file (after following symbolic links): opening a named pipe would block
// every command until something writes to it, and a device or socket is
// never a model.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	if err := checkRegular(fsys, name); err != nil {
		return nil, err
	}
	return fs.ReadFile(fsys, name)
}

// checkRegular returns an *Error naming file unless it is a regular file.
func checkRegular(fsys fs.FS, name string) error {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return &Error{File: name, Msg: fmt.Sprintf("not a regular file (%s): refill reads only regular files", describeMode(info.Mode()))}
	}
	return nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a broken symbolic link"
	}
	return "mode " + m.String()
}
