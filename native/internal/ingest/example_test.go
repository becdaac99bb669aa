package ingest_test

import (
	"fmt"

	"github.com/caskg/caskg/native/internal/ingest"
)

func ExampleParseSkillMD() {
	src := `---
name: summarize-pdf
description: Summarize a PDF in five bullet points.
tags: pdf, summary
requires: extract-text
---
Read the text, then write the bullets.
`
	skills, problems := ingest.ParseSkillMD([]byte(src), "skills/summarize-pdf/SKILL.md")
	for _, s := range skills {
		fmt.Println(s.Name, s.Tags, s.DependsOn)
		fmt.Println(s.Body)
	}
	fmt.Println(len(problems), "problems")
	// Output:
	// summarize-pdf [pdf summary] [extract-text]
	// Read the text, then write the bullets.
	// 0 problems
}

func ExampleParseToolsJSONL() {
	src := `{"name": "get_weather", "description": "Current weather for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string", "description": "city name"}}, "required": ["city"]}}

{"name": "broken", "description": }
`
	tools, problems := ingest.ParseToolsJSONL([]byte(src), "tools.jsonl")
	for _, s := range tools {
		fmt.Println(s.Name, s.Inputs)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	// Output:
	// get_weather [{city string city name true}]
	// tools.jsonl:3: invalid json at column 35: invalid character '}' looking for beginning of value
}
