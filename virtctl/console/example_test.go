package console_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"kubevirt.dev/virt/virtctl/console"
	"kubevirt.dev/virt/virtctl/stream/streamtest"
)

// A test drives a guest's console without a terminal: write a line, read
// until the answer. Here a fake virt-apiserver stands in for the cluster
// (an e2e test passes its cluster's rest.Config).
func ExampleDial() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := streamtest.Upgrade(w, r)
		if err != nil {
			return
		}
		defer conn.Close()
		line, _ := bufio.NewReader(conn).ReadString('\n')
		fmt.Fprintf(conn, "you said %s", strings.ToUpper(line))
	}))
	defer srv.Close()
	cfg := streamtest.Config(srv)

	conn, err := console.Dial(context.Background(), cfg, "default", "vmi-tiny")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "hello\n")
	answer, _ := bufio.NewReader(conn).ReadString('\n')
	fmt.Print(answer)
	// Output: you said HELLO
}
