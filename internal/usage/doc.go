// Package usage counts evaluations by flag key and variant, and the keys
// asked for that the flags in force do not define.
//
// The evaluator knows nothing of it: an evaluation reports which flag of its
// set it evaluated (the flag's index) and which variant it served, and the
// provider hands that to the [Table] of the set. A [Counter] outlives the
// flag sets: when a set replaces another ([Counter.Attach]), each key keeps
// its counts, and counts of variants a key no longer has stay with the key.
//
// Counting must not slow an evaluation down, nor make evaluations on
// several cores wait for each other, nor cost more memory than the flags:
// a flag's counts start in one packed word (a [cell]), and only a flag
// whose evaluations collide spreads them over shards a cache line apart.
//
//	c := usage.NewCounter(time.Now())
//	t := c.NewTable(flags) // flags: the set's keys and variants by index
//	c.Attach(t)            // before anything evaluates the set
//	t.Served(index, variant)
//	u := c.Snapshot(time.Now())
package usage
