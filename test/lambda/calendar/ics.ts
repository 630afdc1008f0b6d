/**
 * Reads a feed back with ical.js (an independent RFC 5545 parser, not the library that wrote it):
 * what a calendar app would see of each event.
 */
import ICAL from 'ical.js';

export interface SeenEvent {
  uid: string;
  sequence: number;
  status: string;
  summary: string;
  url: string;
  dtstamp: string;
  start: string;
  end: string;
  alarms: number[];
}

export function parseFeed(text: string): { name: string; events: SeenEvent[] } {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const events = calendar.getAllSubcomponents('vevent').map((vevent) => {
    const event = new ICAL.Event(vevent);
    const time = (name: string) => (vevent.getFirstPropertyValue(name) as ICAL.Time).toJSDate().toISOString();
    return {
      uid: event.uid,
      sequence: event.sequence,
      status: String(vevent.getFirstPropertyValue('status')),
      summary: event.summary,
      url: String(vevent.getFirstPropertyValue('url')),
      dtstamp: time('dtstamp'),
      start: event.startDate.toJSDate().toISOString(),
      end: event.endDate.toJSDate().toISOString(),
      alarms: vevent.getAllSubcomponents('valarm').map((alarm) => (alarm.getFirstPropertyValue('trigger') as ICAL.Duration).toSeconds()),
    };
  });
  return { name: String(calendar.getFirstPropertyValue('x-wr-calname')), events };
}
