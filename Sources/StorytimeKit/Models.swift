/// The API's models under short names: each is the generated type of the OpenAPI document's schema.
public typealias Book = Components.Schemas.Book
public typealias BookPage = Components.Schemas.BookPage
public typealias Category = Components.Schemas.Category
public typealias Child = Components.Schemas.Child
public typealias LibraryEntry = Components.Schemas.LibraryEntry
public typealias LibraryPage = Components.Schemas.LibraryPage
public typealias Play = Components.Schemas.Play
public typealias HistoryItem = Components.Schemas.HistoryItem
public typealias HistoryPage = Components.Schemas.HistoryPage
public typealias ContinueItem = Components.Schemas.ContinueItem
public typealias ContinuePage = Components.Schemas.ContinuePage
public typealias Stats = Components.Schemas.Stats
public typealias BulkResult = Components.Schemas.BulkResult
public typealias CategoryAddResult = Components.Schemas.CategoryAddResult
public typealias CalendarMonth = Components.Schemas.CalendarMonth
public typealias CalendarDayPage = Components.Schemas.CalendarDayPage
public typealias Controls = Components.Schemas.Controls
public typealias ControlsChange = Components.Schemas.ControlsChange
public typealias Today = Components.Schemas.Today
public typealias Me = Components.Schemas.Me

public typealias BookSort = Operations.ListBooks.Input.Query.SortPayload
public typealias LibrarySort = Operations.ListLibrary.Input.Query.SortPayload
public typealias StatsPeriod = Operations.ChildStats.Input.Query.PeriodPayload
public typealias ExportFormat = Operations.ExportHistory.Input.Query.FormatPayload
public typealias CalendarKind = Operations.CatalogCalendarDay.Input.Query.KindPayload
public typealias BulkAction = Operations.BulkLibrary.Input.Body.JsonPayload.ActionPayload
