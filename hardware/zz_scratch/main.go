package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/hwtest/hwtest/catalog"
	"github.com/hwtest/hwtest/hardware"
)

func main() {
	c, err := catalog.Load("models.yaml", "hardware.yaml")
	if err != nil {
		panic(err)
	}
	r := hardware.Detect(context.Background(), hardware.Targets(c.Targets)...)
	fmt.Print(r.Table())
	if len(os.Args) > 1 {
		b, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(b))
	}
}
