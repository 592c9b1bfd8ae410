// Package docread reads a flag document within a bound, from a reader
// (Read) or from a regular file (RegularFile), so that every reader of a
// document here, however it is given, holds no more than the bound: a
// body that never ends, a device, a file that grows while it is read.
package docread
