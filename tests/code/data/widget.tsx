import React from "react";

type Props = { title: string };

// Shows a titled box.
export function Widget({ title }: Props) {
  return <div className="widget">{title}</div>;
}

export const Badge = ({ title }: Props) => <span>{title}</span>;
