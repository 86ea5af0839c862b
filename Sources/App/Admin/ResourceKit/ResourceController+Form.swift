import Vapor

extension ResourceController {
    @Sendable
    func new(req: Request) async throws -> View {
        try requireWriter(req)
        guard resource.access.allowCreate else { throw Abort(.notFound) }
        let store = try await store(req)
        var raw: [String: String] = [:]
        // As Django's admin does, `?field=value` starts a field with a value (a link from a report).
        for field in resource.form.fields {
            raw[field.name] = (try? req.query.get(String.self, at: field.name)).map { String($0.prefix(1000)) } ?? field.defaultValue ?? ""
        }
        return try await renderForm(req, store, values: FormValues(raw: raw, lists: [:]), errors: [:], id: nil)
    }

    @Sendable
    func edit(req: Request) async throws -> View {
        try requireWriter(req)
        guard resource.access.allowEdit else { throw Abort(.notFound) }
        let store = try await store(req)
        let id = try recordID(req)
        guard let values = try await store.formValues(id) else { throw notFound }
        return try await renderForm(req, store, values: values, errors: [:], id: id)
    }

    @Sendable
    func create(req: Request) async throws -> Response {
        guard resource.access.allowCreate else { try requireWriter(req); throw Abort(.notFound) }
        return try await save(req, id: nil)
    }

    @Sendable
    func update(req: Request) async throws -> Response {
        guard resource.access.allowEdit else { try requireWriter(req); throw Abort(.notFound) }
        return try await save(req, id: try recordID(req))
    }

    /// Create (`id` nil) and update alike: parse, validate, save with its audit row, or show the
    /// form again with the messages beside the fields (a constraint the database enforces too).
    private func save(_ req: Request, id: Int?) async throws -> Response {
        try requireWriter(req)
        let store = try await store(req)
        var values = FormValues(form: try FormBody(req), fields: resource.form.fields)
        resource.form.prepare(&values)
        // A picker sends the name shown: it becomes the record's id, or an error beside the field.
        // Digits alone are an id (scripts and saved forms send ids).
        var unknown: [String: String] = [:]
        for field in resource.form.fields {
            guard let lookup = field.lookup, lookup.picker, case .lookup = field.kind,
                  let text = values.raw[field.name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty, Int(text) == nil else { continue }
            if let id = try await lookup.id(named: text, on: req.sql) { values.raw[field.name] = String(id) }
            else { unknown[field.name] = "No \(field.label.lowercased()) is called “\(text)”: pick one of the suggestions." }
        }
        var errors = values.parse(resource.form.fields).merging(unknown) { _, named in named }
        if errors.isEmpty { errors = resource.form.validate(values) }
        if errors.isEmpty, let check = resource.form.check { errors = await check(values, req) }
        guard errors.isEmpty else { return try await invalid(req, store, values, errors, id: id) }
        let audit = AuditWriter(staff: try req.staff), parsed = values
        do {
            guard let saved = try await req.transaction({ sql in try await store.save(id, parsed, in: sql, audit: audit) }) else { throw notFound }
            req.adminSession.flash("\(resource.singular) “\(saved.name)” was \(id == nil ? "created" : "saved").")
            return req.redirect(to: paths(store).record(saved.id))
        } catch {
            guard let fieldErrors = fieldError(for: error) else { throw error }
            return try await invalid(req, store, values, fieldErrors, id: id)
        }
    }

    private func renderForm(_ req: Request, _ store: ResourceStore, values: FormValues, errors: [String: String], id: Int?) async throws -> View {
        var lookups = LookupCache(sql: req.sql)
        var fields: [FieldView] = []
        for field in resource.form.fields {
            var options: [Choice] = [], shown = values
            if case .choice(let choices) = field.kind { options = choices }
            if let lookup = field.lookup {
                if lookup.picker, case .lookup = field.kind {
                    // The picker shows the name; the form's value is the id until it is sent.
                    if let id = Int(values.raw[field.name] ?? ""), errors[field.name] == nil { shown.raw[field.name] = try await lookup.label(of: id, on: req.sql) ?? "" }
                } else {
                    options = try await lookups.choices(lookup)
                }
            }
            fields.append(FormRenderer.field(field, values: shown, error: errors[field.name], options: options))
        }
        let path = paths(store)
        let heading = id.map { "Edit \(resource.singular.lowercased()) #\($0)" } ?? "New \(resource.singular.lowercased())"
        let action = id.map(path.record) ?? path.list
        let summary = resource.form.fields.compactMap { field in errors[field.name].map { "\(field.label): \($0)" } }
        let page = FormPage(layout: LayoutView(req, title: heading, section: resource.section),
                            heading: heading, action: action, cancelURL: action, fields: fields,
                            hasErrors: !errors.isEmpty, errorSummary: summary)
        return try await req.view.render("form", page)
    }

    private func invalid(_ req: Request, _ store: ResourceStore, _ values: FormValues, _ errors: [String: String], id: Int?) async throws -> Response {
        let response = try await renderForm(req, store, values: values, errors: errors, id: id).encodeResponse(for: req)
        response.status = .unprocessableEntity
        return response
    }

    /// A constraint violation as a field error, when the resource names it.
    private func fieldError(for error: any Error) -> [String: String]? {
        guard let violation = ConstraintViolation(error) else { return nil }
        if let message = resource.form.constraintMessages[violation.constraint] { return [message.field: message.message] }
        if violation.kind == .foreignKey, let field = resource.form.fields.first(where: { violation.constraint.contains($0.name) }) {
            return [field.name: "Choose from the list."]
        }
        return ["_": "The database refused this change (\(violation.constraint))."]
    }
}
