/// A declared field as the form template shows it: its input type, value, options and error.
enum FormRenderer {
    static func field(_ field: AdminField, values: FormValues, error: String?, options: [Choice]) -> FieldView {
        let value = values.raw[field.name] ?? ""
        var type = "text", min: Int?, max: Int?, maxLength: Int?, checked = false
        var optionViews: [OptionView] = []
        switch field.kind {
        case .text(let limit): maxLength = limit
        case .textarea(let limit): type = "textarea"; maxLength = limit
        case .integer(let range): type = "number"; min = range.lowerBound; max = range.upperBound
        case .lookup(let lookup) where lookup.picker:
            type = "picker"; maxLength = 300
        case .choice, .lookup:
            type = "select"
            let blank = field.nullable || !field.required ? [OptionView(value: "", label: "—", selected: value.isEmpty)] : []
            optionViews = blank + options.map { OptionView(value: $0.value, label: $0.label, selected: $0.value == value) }
        case .checkbox: type = "checkbox"; checked = !value.isEmpty
        case .datetime: type = "datetime"
        case .countries: maxLength = 1000
        case .multiLookup:
            type = "checkboxes"
            let selected = Set(values.lists[field.name] ?? [])
            optionViews = options.map { OptionView(value: $0.value, label: $0.label, selected: selected.contains($0.value)) }
        }
        return FieldView(name: field.name, label: field.label, type: type, value: value, error: error,
                         required: field.required, help: field.help, options: optionViews, checked: checked,
                         min: min, max: max, maxLength: maxLength,
                         lookupURL: field.lookup.flatMap { $0.picker ? AdminPath.lookup + "/" + $0.table : nil })
    }
}
