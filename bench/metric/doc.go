// Package metric scrapes a server's Prometheus text /metrics and sums
// series by label, enough to read apiserver_request_total and the Go
// memory gauges. Histograms and exemplars are not interpreted.
package metric
