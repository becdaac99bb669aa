package verboseapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func source() ([]Tool, []Task) {
	meta := func(f string) *struct {
		Field string `json:"field"`
	} {
		return &struct {
			Field string `json:"field"`
		}{f}
	}
	out := json.RawMessage(`{"type":"object","properties":{"forecast_id":{"type":"string"},"high":{"type":"number"}}}`)
	tools := []Tool{
		{Name: "getDailyForecast", Description: "Daily forecast for a city", OutputSchema: out, Meta: meta("Science/Weather Service")},
		{Name: "getWindSpeed", Description: "Wind speed now.", Meta: meta("Science/Weather Service")},
		{Name: "switchLamp", Description: "Turn a lamp on or off", Meta: meta("Home/Smart Home")},
		{Name: "setThermostat", Description: "Set a room's temperature", Meta: meta("Home/Smart Home")},
		{Name: "read_file", Description: "Read a text file"},
		{Name: "getQuote", Description: "A stock's last price", Meta: meta("Finance/Stock Market")},
	}
	tasks := []Task{
		{ID: "1", Query: "What is the forecast for Oslo?", Gold: []string{"getDailyForecast"}},
		{ID: "2", Query: "Turn on the lamp.", Gold: []string{"switchLamp"}},
		{ID: "3", Query: "How windy is it?", Gold: []string{"getWindSpeed"}},
		{ID: "4", Query: "Set the thermostat to 20 and get the wind speed.", Gold: []string{"setThermostat", "getWindSpeed"}},
		{ID: "5", Query: "Open the notes file I saved yesterday in my home folder and show me what it says.", Gold: []string{"read_file"}},
		{ID: "6", Query: "Read notes.txt.", Gold: []string{"read_file"}},
	}
	return tools, tasks
}

func TestGenerate(t *testing.T) {
	tools, tasks := source()
	tests := []struct {
		name      string
		opt       Options
		wantNames []string
		wantQuery func(q string) bool
	}{
		{"verbose", Options{Seed: 1, Tools: 10},
			[]string{"read_api_file", "smart_home_api_set_thermostat", "smart_home_api_switch_lamp", "weather_service_api_get_daily_forecast", "weather_service_api_get_wind_speed"},
			func(q string) bool { return strings.Count(q, ".") >= 1 }},
		{"short", Options{Seed: 1, Tools: 10, Short: true},
			[]string{"read_file", "smart-home.set-thermostat", "smart-home.switch-lamp", "stock-market.get-quote", "weather-service.get-daily-forecast", "weather-service.get-wind-speed"},
			func(q string) bool { return !strings.Contains(q, " Also, ") && len(strings.Fields(q)) <= shortWords }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Generate(tools, tasks, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, x := range out.Tools {
				names = append(names, x["name"].(string))
			}
			if !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("names %v, want %v", names, tt.wantNames)
			}
			if len(out.Tasks) == 0 {
				t.Fatal("no tasks")
			}
			known := map[string]bool{}
			for _, n := range names {
				known[n] = true
			}
			for _, task := range out.Tasks {
				for _, g := range task.Gold {
					if !known[g] {
						t.Errorf("task %s: gold %s not in the catalog", task.ID, g)
					}
				}
				if !tt.wantQuery(task.Query) {
					t.Errorf("task %s: query %q", task.ID, task.Query)
				}
			}
			again, _ := Generate(tools, tasks, tt.opt)
			if !reflect.DeepEqual(out, again) {
				t.Error("not deterministic")
			}
		})
	}
	out, _ := Generate(tools, tasks, Options{Seed: 1, Tools: 10})
	for _, x := range out.Tools {
		if x["name"] == "weather_service_api_get_daily_forecast" {
			d := x["description"].(string)
			if !strings.HasPrefix(d, "Daily forecast for a city. Sample response: {") || !strings.Contains(d, `"high":`) {
				t.Errorf("description %q", d)
			}
			if x["title"] != "Get Daily Forecast" {
				t.Errorf("title %q", x["title"])
			}
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	tools, tasks := source()
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"no size", Options{}, "tools 0 must be positive"},
		{"bad part", Options{Tools: 5, Parts: 2, Part: 2}, "part 2 out of range"},
	}
	for _, tt := range tests {
		if _, err := Generate(tools, tasks, tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	if _, err := Generate(tools, nil, Options{Tools: 5}); err == nil {
		t.Error("no tasks: no error")
	}
}
