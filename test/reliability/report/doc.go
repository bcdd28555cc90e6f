// Package report collects the reliability suite's figures and writes them
// as markdown (docs/reliability.md): for each fault what was done, the load
// that ran meanwhile, how each figure is measured, and each result with its
// bound and whether it held.
//
// A result's bound is a must (a figure the platform guarantees: missing it
// fails the test), a target (an aim: missing it fails the test too, unless
// the result carries the argument why it does not, which the report
// prints), or none (measured and reported). Tests add their figures to a
// Book; the suite's TestMain writes the book once every test ran.
//
// It knows nothing of the cluster or the components.
package report
