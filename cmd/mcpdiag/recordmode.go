package main

import (
	"fmt"
	"os"
)

// readableByOthers is the warning for a record file given with flag that
// its group or others can read ("" when they cannot, or path is "-"). A
// record file mcpdiag creates is 0600 (records hold tool arguments and
// results); one that already existed is appended to with its own mode,
// which mcpdiag does not change behind its owner's back: it says so.
func readableByOthers(flag, path string) string {
	if path == "" || path == "-" {
		return ""
	}
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("warning: %s %s is readable by others (mode %#o): the records are appended to it as it is (a new record file is created 0600); chmod 600 it if they should not read them", flag, path, st.Mode().Perm())
}
