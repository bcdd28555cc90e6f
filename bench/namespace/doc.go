// Package namespace makes and removes the benchmarks' own namespaces
// (bench-*), labelled so that leftovers of a killed run are recognised and
// removed by the next one.
package namespace
