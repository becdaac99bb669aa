package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caskg/caskg/native/mcpserver"
)

func TestZZDump(t *testing.T) {
	srv, _ := mcpserver.New(sample(t), mcpserver.Options{})
	ct, st := mcp.NewInMemoryTransports()
	go srv.Run(context.Background(), st)
	c := mcp.NewClient(&mcp.Implementation{Name: "x", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		b, _ := json.MarshalIndent(tl.OutputSchema, "", "  ")
		fmt.Printf("=== %s\n%s\n", tl.Name, b)
	}
}
