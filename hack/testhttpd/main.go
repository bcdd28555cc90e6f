// Command testhttpd is the e2e tests' pod-side peer of a guest: an HTTP
// server whose answer names the pod and the client address it saw, so a
// test can tell which pod answered and from where the request came. Built
// static into the image localhost/test-httpd (hack/cluster/images.sh).
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("listen", ":8080", "address to serve HTTP on")
	flag.Parse()
	host, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "VIRT-TEST-HTTPD %s client=%s\n", host, r.RemoteAddr)
	})
	log.Printf("serving on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
