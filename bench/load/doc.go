// Package load runs one operation from N concurrent clients for a bounded
// time and count, and summarises the latencies. It knows nothing of what
// the operation does.
package load
