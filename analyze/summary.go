package analyze

import "reflect"

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}

// SummaryNumbers maps the summary's numeric fields, by their JSON names, to
// their values; a null field is absent.
func SummaryNumbers(s Summary) map[string]float64 {
	out := map[string]float64{}
	v := reflect.ValueOf(s)
	for i := 0; i < v.NumField(); i++ {
		if x, ok := toFloat(v.Field(i)); ok {
			out[jsonName(v.Type().Field(i))] = x
		}
	}
	return out
}

// toFloat reads a numeric summary field; ok is false for a null or a
// field that is not a number.
func toFloat(v reflect.Value) (float64, bool) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0, false
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Float64:
		return v.Float(), true
	}
	return 0, false
}
