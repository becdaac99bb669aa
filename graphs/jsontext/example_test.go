package jsontext_test

import (
	"fmt"

	"github.com/caskg/caskg/graphs/jsontext"
)

type task struct {
	Name string
	K    int
}

// decodeTask is the shape of the code generated for a request type: it drives the Decoder with
// the members it expects, and anything else is an error.
func decodeTask(data []byte) (task, error) {
	var t task
	d := jsontext.NewDecoder(data)
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "name":
			t.Name, err = d.String()
		case "k":
			var k int64
			k, err = d.Int(64)
			t.K = int(k)
		default:
			err = d.UnknownField()
		}
		return err
	})
	if err != nil {
		return t, err
	}
	return t, d.End()
}

func Example() {
	t, err := decodeTask([]byte(` {"name": "heat <egg>", "k": 3} `))
	fmt.Println(t.Name, t.K, err)
	_, err = decodeTask([]byte(`{"name":"x","kk":1}`))
	fmt.Println(err)

	b := append([]byte(nil), '{')
	b = jsontext.AppendKey(b, `"name":`)
	b = jsontext.AppendString(b, t.Name)
	b = jsontext.AppendKey(b, `"score":`)
	b, _ = jsontext.AppendFloat(b, 1e-7, 64)
	b = append(b, '}')
	fmt.Println(string(b), jsontext.Valid(b), jsontext.Valid(b[:len(b)-1]))
	// Output:
	// heat <egg> 3 <nil>
	// json at offset 12: field "kk": unknown field
	// {"name":"heat \u003cegg\u003e","score":1e-7} true false
}
