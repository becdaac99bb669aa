package mcpcore

// The output schemas of the tools: the JSON Schema of each tool's structured content, as
// tools/list gives it. native/internal/mcpserver declares them to the Go SDK, which checks what its
// handlers return against them, and its tests hold them to the result types (results.go); the
// worker's handler writes the same JSON by hand (encode.go).
const (
	// edgeSchema is an edge of skill_neighbors, in and out alike.
	edgeSchema = `{
        "additionalProperties": false,
        "properties": {
          "assoc": {
            "description": "association score A before calibration",
            "type": "number"
          },
          "evidence": {
            "description": "the edge in words, from the asked skill's side",
            "type": "string"
          },
          "skill": {
            "description": "the skill at the other end",
            "type": "string"
          },
          "state": {
            "description": "calibration state: confirmed, uncertain, scaffold or unvalidated",
            "type": "string"
          },
          "type": {
            "description": "relation: dependency, workflow, semantic or alternative",
            "type": "string"
          },
          "weight": {
            "description": "published weight in [0, 1]",
            "type": "number"
          }
        },
        "required": [
          "skill",
          "state",
          "type",
          "weight",
          "assoc",
          "evidence"
        ],
        "type": "object"
      }`

	getSkillOutput = `{
  "additionalProperties": false,
  "properties": {
    "complete": {
      "description": "true: the whole SKILL.md read from the library; false: description and body head from the graph",
      "type": "boolean"
    },
    "name": {
      "type": "string"
    },
    "note": {
      "description": "why the text is not the whole file",
      "type": "string"
    },
    "source": {
      "description": "the file the text is from, or the artifact's source path when complete is false",
      "type": "string"
    },
    "text": {
      "type": "string"
    }
  },
  "required": [
    "name",
    "source",
    "complete",
    "text"
  ],
  "type": "object"
}`
	graphInfoOutput = `{
  "additionalProperties": false,
  "properties": {
    "artifact": {
      "description": "the artifact file",
      "type": "string"
    },
    "by_state": {
      "additionalProperties": {
        "type": "integer"
      },
      "description": "published edges per calibration state",
      "type": "object"
    },
    "by_type": {
      "additionalProperties": {
        "type": "integer"
      },
      "description": "published edges per relation type",
      "type": "object"
    },
    "bytes": {
      "type": "integer"
    },
    "edges": {
      "description": "published edges",
      "type": "integer"
    },
    "learning": {
      "additionalProperties": false,
      "description": "what the graph has learned from use; cold: nothing yet, and the note says how it learns",
      "properties": {
        "cold": {
          "type": "boolean"
        },
        "live_edges": {
          "type": "integer"
        },
        "note": {
          "type": "string"
        },
        "runs": {
          "type": "integer"
        }
      },
      "required": [
        "runs",
        "live_edges",
        "cold",
        "note"
      ],
      "type": "object"
    },
    "library": {
      "additionalProperties": false,
      "properties": {
        "dir": {
          "description": "the library folder",
          "type": "string"
        },
        "problems": {
          "description": "bad entries the library load skipped",
          "type": "integer"
        },
        "served": {
          "description": "skills of the graph whose whole SKILL.md get_skill serves",
          "type": "integer"
        },
        "skills": {
          "description": "SKILL.md skills the library load found",
          "type": "integer"
        }
      },
      "required": [
        "dir",
        "skills",
        "served",
        "problems"
      ],
      "type": [
        "null",
        "object"
      ]
    },
    "memory_bytes": {
      "description": "bytes of the memory of past tasks' sections; absent without one (its runs, tool sets, weight and terms kept and dropped are in params.memory)",
      "type": "integer"
    },
    "params": {
      "additionalProperties": true,
      "description": "the build parameters",
      "type": "object"
    },
    "query_encoder": {
      "description": "whether the artifact embeds queries itself",
      "type": "boolean"
    },
    "skills": {
      "type": "integer"
    },
    "terms": {
      "description": "lexicon terms",
      "type": "integer"
    },
    "vector_dim": {
      "description": "dimension of the skill vectors; absent without vectors",
      "type": "integer"
    },
    "vector_model": {
      "description": "the model that made the skill vectors",
      "type": "string"
    },
    "version": {
      "description": "artifact format version",
      "type": "string"
    }
  },
  "required": [
    "version",
    "bytes",
    "skills",
    "edges",
    "terms",
    "by_state",
    "by_type",
    "query_encoder",
    "params",
    "learning"
  ],
  "type": "object"
}`
	reportOutput = `{
  "additionalProperties": false,
  "properties": {
    "outcome": {
      "description": "the outcome recorded, if given",
      "type": "string"
    },
    "recorded": {
      "description": "how many skill uses were recorded",
      "type": "integer"
    }
  },
  "required": [
    "recorded"
  ],
  "type": "object"
}`
	retrieveOutput = `{
  "additionalProperties": false,
  "properties": {
    "match": {
      "description": "the answer's match strength in [0, 1], comparable across tasks: the share of the task's weight the first 8 results' words cover together; below 0.4 no skill matches the task well",
      "type": "number"
    },
    "note": {
      "description": "why the answer may be empty or weak: no term of the query is in the library's index, or no skill matches the task well",
      "type": "string"
    },
    "query": {
      "description": "the task as given",
      "type": "string"
    },
    "results": {
      "description": "the skills, most relevant first",
      "items": {
        "additionalProperties": false,
        "properties": {
          "description": {
            "type": "string"
          },
          "graph": {
            "description": "true when a published edge from a seed raised the skill's score above its own match; a skill with neither seed_rank nor graph is a match beyond the seeds",
            "type": "boolean"
          },
          "match": {
            "description": "score times the answer's match strength: comparable across tasks, as score is not",
            "type": "number"
          },
          "name": {
            "type": "string"
          },
          "rank": {
            "description": "1-based rank",
            "type": "integer"
          },
          "recalled": {
            "additionalProperties": false,
            "description": "set when the memory of past tasks raised the skill: how many past runs whose tasks shared the task's words used it, and those words (stemmed)",
            "properties": {
              "runs": {
                "type": "integer"
              },
              "terms": {
                "items": {
                  "type": "string"
                },
                "type": [
                  "null",
                  "array"
                ]
              }
            },
            "required": [
              "runs",
              "terms"
            ],
            "type": [
              "null",
              "object"
            ]
          },
          "score": {
            "description": "relative to the best result, which has 1 (fused seed evidence, raised by the graph)",
            "type": "number"
          },
          "seed_rank": {
            "description": "rank among the seeds that match the task best; absent for other skills",
            "type": "integer"
          },
          "source": {
            "description": "the file the skill was built from",
            "type": "string"
          },
          "via": {
            "description": "published edges that brought the skill in; reverse means the skill is a prerequisite of from",
            "items": {
              "additionalProperties": false,
              "properties": {
                "from": {
                  "type": "string"
                },
                "reverse": {
                  "type": "boolean"
                },
                "state": {
                  "type": "string"
                },
                "type": {
                  "type": "string"
                },
                "weight": {
                  "type": "number"
                }
              },
              "required": [
                "from",
                "state",
                "weight",
                "type"
              ],
              "type": "object"
            },
            "type": [
              "null",
              "array"
            ]
          }
        },
        "required": [
          "rank",
          "name",
          "score",
          "match",
          "description",
          "source"
        ],
        "type": "object"
      },
      "type": [
        "null",
        "array"
      ]
    }
  },
  "required": [
    "query",
    "results",
    "match"
  ],
  "type": "object"
}`
	neighborsOutput = `{
  "additionalProperties": false,
  "properties": {
    "in": {
      "description": "published edges from others to this skill: they come first",
      "items": ` + edgeSchema + `,
      "type": [
        "null",
        "array"
      ]
    },
    "in_total": {
      "description": "edges in, listed or not",
      "type": "integer"
    },
    "name": {
      "type": "string"
    },
    "out": {
      "description": "published edges from this skill to others: it comes first",
      "items": ` + edgeSchema + `,
      "type": [
        "null",
        "array"
      ]
    },
    "out_total": {
      "description": "edges out, listed or not",
      "type": "integer"
    }
  },
  "required": [
    "name",
    "out",
    "in",
    "out_total",
    "in_total"
  ],
  "type": "object"
}`
)
