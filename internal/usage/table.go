package usage

import "sync/atomic"

// Table counts the evaluations of one flag set. Its counts belong to the
// counter's keys, so an evaluation still running on a set that has been
// replaced counts where the new set's evaluations do.
type Table struct {
	c     *Counter
	flags Flags
	// slots are the counts of each flag by index, found on the flag's
	// first evaluation: a flag that is never evaluated costs a nil
	// pointer.
	slots []atomic.Pointer[counts]
}

// NewTable returns the table of the flag set flags, to attach before the
// set is evaluated.
func (c *Counter) NewTable(flags Flags) *Table {
	return &Table{c: c, flags: flags, slots: make([]atomic.Pointer[counts], flags.Slots())}
}

// Served counts an evaluation of the flag at index i that served its
// variant j.
func (t *Table) Served(i, j int) { t.add(i, wordVariant+j) }

// Failed counts an evaluation of the flag at index i that failed with
// code; a code out of range counts as General.
func (t *Table) Failed(i int, code ErrorCode) {
	if code >= numErrorCodes {
		code = General
	}
	t.add(i, wordError+int(code))
}

// Bulk counts a bulk evaluation of each flag at indexes, whatever it
// answered: one token for them all, since they are counted together.
func (t *Table) Bulk(indexes []int32) {
	tok := t.c.shards.pool.Get().(*token)
	for _, i := range indexes {
		k := t.slots[i].Load()
		if k == nil {
			if k = t.c.countsFor(t, int(i)); k == nil {
				continue
			}
		}
		k.words[tok.shard*k.stride+wordBulk].Add(1)
	}
	t.c.shards.pool.Put(tok)
}

// Unserved counts an evaluation of the flag at index i that served no
// variant without an error: a disabled flag, or no default variant.
func (t *Table) Unserved(i int) { t.add(i, wordNone) }

func (t *Table) add(i, word int) {
	k := t.slots[i].Load()
	if k == nil {
		if k = t.c.countsFor(t, i); k == nil {
			return
		}
	}
	// The processor's token is taken and put back around the add, so that
	// the goroutine adds to the shard of the processor it runs on.
	tok := t.c.shards.pool.Get().(*token)
	k.words[tok.shard*k.stride+word].Add(1)
	t.c.shards.pool.Put(tok)
}

// Missing counts an evaluation of key, which the set does not define.
func (t *Table) Missing(key string) { t.c.missing.count(key, t.c) }
