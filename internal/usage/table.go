package usage

import "sync/atomic"

// Table counts the evaluations of one flag set. Its counts belong to the
// counter's keys, so an evaluation still running on a set that has been
// replaced counts where the new set's evaluations do.
type Table struct {
	c     *Counter
	flags Flags
	// cells are the counts of each flag by index, found on the flag's
	// first evaluation: a flag that is never evaluated costs a nil
	// pointer.
	cells []atomic.Pointer[cell]
}

// NewTable returns the table of the flag set flags, to attach before the
// set is evaluated.
func (c *Counter) NewTable(flags Flags) *Table {
	return &Table{c: c, flags: flags, cells: make([]atomic.Pointer[cell], flags.Len())}
}

// Served counts an evaluation of the flag at index i that served its
// variant j.
func (t *Table) Served(i, j int) { t.add(i, j) }

// Failed counts an evaluation of the flag at index i that failed with
// code; a code out of range counts as General.
func (t *Table) Failed(i int, code ErrorCode) {
	if code >= numErrorCodes {
		code = General
	}
	t.add(i, errorOutcome(t.flags.VariantCount(i), code))
}

// Unserved counts an evaluation of the flag at index i that served no
// variant without an error: a disabled flag, or no default variant.
func (t *Table) Unserved(i int) { t.add(i, noneOutcome(t.flags.VariantCount(i))) }

// Bulk counts a bulk evaluation of each flag at indexes, whatever it
// answered.
func (t *Table) Bulk(indexes []int32) {
	for _, i := range indexes {
		t.add(int(i), bulkOutcome(t.flags.VariantCount(int(i))))
	}
}

func (t *Table) add(i, o int) {
	k := t.cells[i].Load()
	if k == nil {
		if k = t.c.cellFor(t, i); k == nil {
			return
		}
	}
	k.add(o, t, i)
}

// Missing notes an evaluation of key, which the set does not define and
// keeps no tally for, as dropped: the set names no more missing keys.
func (t *Table) Missing(key string) { t.c.missing.window.Load().drop(key) }

// MissingTallied counts an evaluation of key, which the set does not
// define, in count, a tally the set keeps for the key, with the window
// the count belongs to: no lookup of the key.
func (t *Table) MissingTallied(key string, count, window *atomic.Uint64) {
	if window.Load() == t.c.missing.current.Load() {
		count.Add(1)
		return
	}
	t.c.missing.tallied(key, count, window, t.c)
}
