import Core
extension CatalogIndex {
    // The title and newest orders: sorted id lists kept in step with every change.

    func lessTitle(_ a: Int, _ b: Int) -> Bool {
        titleKeys.storage.withUnsafeBufferPointer { keys in
            let x = titleKeys.range(a), y = titleKeys.range(b)
            let n = min(x.count, y.count)
            for i in 0..<n where keys[x.lowerBound + i] != keys[y.lowerBound + i] {
                return keys[x.lowerBound + i] < keys[y.lowerBound + i]
            }
            return x.count != y.count ? x.count < y.count : a < b
        }
    }

    func lessNewest(_ a: Int, _ b: Int) -> Bool {
        let x = createdAt[a], y = createdAt[b]
        if x != y { return x > y }
        return a > b
    }

    mutating func removeFromOrders(_ id: Int) {
        if let at = index(in: titleOrder, of: id, by: lessTitle) { titleOrder.remove(at: at) }
        if let at = index(in: newestOrder, of: id, by: lessNewest) { newestOrder.remove(at: at) }
    }

    mutating func insertIntoOrders(_ id: Int) {
        titleOrder.insert(Int32(id), at: position(in: titleOrder, of: id, by: lessTitle))
        newestOrder.insert(Int32(id), at: position(in: newestOrder, of: id, by: lessNewest))
    }

    func position(in order: [Int32], of id: Int, by less: (Int, Int) -> Bool) -> Int {
        var a = 0, b = order.count
        while a < b {
            let m = (a + b) / 2
            if less(Int(order[m]), id) { a = m + 1 } else { b = m }
        }
        return a
    }

    func index(in order: [Int32], of id: Int, by less: (Int, Int) -> Bool) -> Int? {
        let at = position(in: order, of: id, by: less)
        return at < order.count && order[at] == Int32(id) ? at : nil
    }

    func merge(_ a: [Int32], _ b: [Int32], by less: (Int, Int) -> Bool) -> [Int32] {
        var result: [Int32] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if less(Int(b[j]), Int(a[i])) { result.append(b[j]); j += 1 } else { result.append(a[i]); i += 1 }
        }
        result.append(contentsOf: a[i...])
        result.append(contentsOf: b[j...])
        return result
    }
}
