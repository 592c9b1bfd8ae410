// Package usage counts evaluations by flag key and variant, and the keys
// asked for that the flags in force do not define.
//
// The evaluator knows nothing of it: an evaluation reports which flag of its
// set it evaluated (the flag's index) and which variant it served, and the
// provider hands that to the [Table] of the set. A [Counter] outlives the
// flag sets: when a set replaces another ([Counter.Attach]), each key keeps
// its counts, and counts of variants a key no longer has stay with the key.
//
// Counting must not slow an evaluation down or make evaluations on several
// cores wait for each other, so each flag's counters are split into shards,
// one cache line apart, and an evaluation adds to the shard of the processor
// it runs on.
//
//	c := usage.NewCounter(time.Now())
//	t := c.NewTable(flags) // flags: the set's keys and variants by index
//	c.Attach(t)            // before anything evaluates the set
//	t.Count(index, variant)
//	u := c.Snapshot(time.Now())
package usage
