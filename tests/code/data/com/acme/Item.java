package com.acme;

public record Item(String name) {}
