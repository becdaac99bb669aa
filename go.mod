module github.com/caskg/caskg

go 1.26.8

require (
	github.com/agnivade/levenshtein v1.2.1
	github.com/google/go-cmp v0.7.0
	gopkg.in/yaml.v3 v3.0.1
)
