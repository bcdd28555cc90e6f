// Package streamtest is the server side of package stream for tests: an
// httptest server's handler upgrades a request the way virt-handler does
// (subprotocol plain.kubevirt.io) and talks bytes over it.
package streamtest
