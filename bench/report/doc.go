// Package report renders a run's results as docs/performance.md (the
// machine, the parts' tables, each ratio and whether each target was met)
// and docs/performance.png (gonum/plot). It measures nothing.
package report
