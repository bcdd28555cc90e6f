// Package noderestriction is the admission plugin that confines node
// daemons to their own node: an identity listed as node-restricted (the
// virt-handler service account) may write a VMI only if the VMI was handed
// to the node its credentials were issued on. A compromised node therefore
// cannot stop, fail or rewrite the guests of other nodes.
//
// The node comes from the user's extra info authentication.kubernetes.io/
// node-name, which the kube-apiserver puts into the bound service-account
// token of every pod and which delegated authentication (TokenReview, or the
// aggregator's X-Remote-Extra headers) passes on.
package noderestriction
