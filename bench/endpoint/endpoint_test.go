package endpoint_test

import (
	"testing"

	"kubevirt.dev/virt/bench/endpoint"
)

// Load may only go to the local cluster's 198.18.0.0/15.
func TestCheckHostRefusesEverythingOutsideTheClusterRange(t *testing.T) {
	for _, u := range []string{
		// Just below and just above the range, then the rest of the world.
		"https://198.17.255.254:6443", "https://198.20.0.1:6443",
		"https://8.8.8.8", "https://example.com", "https://localhost:6443",
	} {
		if err := endpoint.CheckHost(u); err == nil {
			t.Errorf("CheckHost(%s) allowed it", u)
		}
	}
}
