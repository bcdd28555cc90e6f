// Package writecount counts the API writes one VMI costs (issue 9, part 3),
// from the servers' own metrics: apiserver_request_total of virt-apiserver
// and of the kube-apiserver, by verb, resource and subresource, scraped
// before and after N VMIs go from create to Running and from delete to
// gone. The writes the cluster makes anyway (leases, node status, other
// users) are measured in an idle window of the same run and subtracted at
// their rate. Requests the kube-apiserver proxies to virt-apiserver are
// counted once, at virt-apiserver. Watches on the VMIs and pods count the
// object changes too, as a cross-check: a request that changes nothing
// (or fails) is a write request but no change.
package writecount
