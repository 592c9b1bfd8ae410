package flagsnaptest

import "github.com/flagsnap/flagsnap"

// Usage is how the flags were evaluated since New returned: for a test
// that asserts that a code path reads a flag, gets a variant of it, or
// asks for a key the flags do not define (Usage.Missing, where a typo in
// a flag key shows). An evaluation is counted by the time the client's
// call returns. Start a new count with Provider().ResetUsage(); with
// flagsnap.WithoutUsage among New's options, it is empty.
func (f *Flags) Usage() flagsnap.Usage { return f.provider.Usage() }
