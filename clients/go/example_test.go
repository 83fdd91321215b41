package nfkeeper_test

import (
	"context"
	"fmt"

	nfk "github.com/nfkeeper/nfkeeper/clients/go"
)

// A transaction against the Fake: what a controller's unit test does. With
// a *Client (nfk.New(nfk.Options{})) the same code talks to the daemon.
func ExampleFake() {
	ctx := context.Background()
	var nft nfk.Interface = nfk.NewFake()

	tx := nft.NewTransaction(nfk.IPv4)
	tx.Add(&nfk.Chain{Name: "WEB"})
	tx.Add(&nfk.Rule{Chain: "WEB", Spec: []string{"-p", "tcp", "-m", "tcp", "--dport", "443", "-j", "ACCEPT"}})
	tx.Add(&nfk.Rule{Chain: "INPUT", Spec: []string{"-j", "WEB"}})
	if err := nft.Run(ctx, tx); err != nil {
		fmt.Println(err)
	}

	// All or nothing: the second operation fails, the first is not applied.
	tx = nft.NewTransaction(nfk.IPv4)
	tx.Add(&nfk.Chain{Name: "API"})
	tx.Delete(&nfk.Chain{Name: "WEB"})
	err := nft.Run(ctx, tx)
	fmt.Println(err)
	fmt.Println("in use:", nfk.IsInUse(err))

	fmt.Print(nft.(*nfk.Fake).Dump())
	// Output:
	// operation 2 of 2 (-t filter -X WEB) failed: nfkeeper: Too many links.
	// in use: true
	// *filter
	// :INPUT ACCEPT [0:0]
	// :FORWARD ACCEPT [0:0]
	// :OUTPUT ACCEPT [0:0]
	// :WEB - [0:0]
	// -A INPUT -j WEB
	// -A WEB -p tcp -m tcp --dport 443 -j ACCEPT
	// COMMIT
}
