// Package noderestriction confines node daemons to their own node in
// virt-apiserver: an identity that is node-restricted (a service account
// named virt-handler, in any namespace, by default) may write a VMI only if
// the VMI was handed to the node its credentials were issued on (the
// admission plugin), and may list and watch VMIs only with the field
// selector of that node (the authorizer; reads reach no admission). A
// compromised node therefore can neither stop, fail or rewrite the guests of
// other nodes nor read them.
//
// The node comes from the user's extra info authentication.kubernetes.io/
// node-name, which the kube-apiserver puts into the bound service-account
// token of every pod and which delegated authentication (TokenReview, or the
// aggregator's X-Remote-Extra headers) passes on.
package noderestriction
