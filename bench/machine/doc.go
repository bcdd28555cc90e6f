// Package machine describes the host a run measured on: CPU, cores,
// memory, kernel, load, and the versions of the software under test.
package machine
