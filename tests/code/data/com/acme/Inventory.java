package com.acme;

import java.util.ArrayList;
import java.util.List;
import com.acme.Item;

/**
 * Keeps items in stock.
 */
public class Inventory {
    private final List<Item> items = new ArrayList<>();

    /** An empty inventory. */
    public Inventory() {
    }

    @Override
    public String toString() {
        return "Inventory(" + items.size() + ")";
    }

    public void add(Item item) {
        items.add(item);
    }

    interface Listener {
        void changed(Inventory inventory);
    }

    enum Kind { BOOK, TOOL }
}
